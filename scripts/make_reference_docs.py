#!/usr/bin/env python3
"""The docs' pages made from the code, so that they cannot drift from it:
  docs/reference/flags.md         every flag, from the flag table (launcher/flag_table.cpp, as
                                  the aml-launch-flags program of a build prints it)
  docs/guides/from-torchrun.md    its table of torchrun's flags (between its markers), likewise
  docs/reference/environment.md   every variable read and set, from aml-launch --help
  docs/reference/exit-status.md   the exit statuses, from aml-launch --help
--check compares instead of writing (the suite's docs.reference_pages test).

usage: make_reference_docs.py BUILD_DIR [--check]
"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BEGIN = "<!-- made by scripts/make_reference_docs.py from the code: do not edit -->"
END = "<!-- end of the part made by scripts/make_reference_docs.py -->"


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def spelled(flag):
    value = {"value": " " + flag["shape"], "optional_value": "[=" + flag["shape"] + "]",
             "nothing": ""}[flag["takes"]]
    return cell(", ".join(f"`{name}{value if i == 0 else ''}`"
                          for i, name in enumerate(flag["names"])))


def flags_page(flags):
    lines = [
        "# Flags", "", BEGIN, "",
        "Every flag of `aml-launch`, from the table `aml-launch --help` is made from. torchrun's",
        "spellings (with underscores) are taken too; what each of torchrun's flags does here is in",
        "[From torchrun](../guides/from-torchrun.md).", "",
        "| flag | default | variable | what it does |", "|---|---|---|---|",
    ]
    for flag in flags:
        variable = f"`{flag['variable']}`" if flag["variable"] else ""
        lines.append(f"| {spelled(flag)} | {cell(flag['default'])} | {variable} | "
                     f"{cell(flag['help'])} |")
    return "\n".join(lines + ["", END, ""])


def torchrun_table(flags):
    meaning = {"same": "the same", "differs": "differs", "no_use": "accepted, no use here"}
    lines = [BEGIN, "", "| torchrun's flag | here | what it does here |", "|---|---|---|"]
    for flag in flags:
        if flag["torchrun"] == "none":
            continue
        lines.append(f"| {spelled(flag)} | {meaning[flag['torchrun']]} | "
                     f"{cell(flag['note'] or flag['help'])} |")
    return "\n".join(lines + ["", END])


def help_section(help_text, start, end):
    """The paragraphs of --help from the one that starts with `start` up to `end` (or the end)."""
    begin = help_text.index(start)
    stop = help_text.index(end, begin) if end else len(help_text)
    return help_text[begin:stop].strip("\n")


def environment_page(help_text):
    sources = help_section(help_text, "Where the topology comes from", "\nLaunch:")
    launch = help_section(help_text, "Launch:", "\nMulti-node")
    worker = help_section(help_text, "Every worker gets:", "\nSupervision:")
    return "\n".join([
        "# Environment variables", "", BEGIN, "",
        "As `aml-launch --help` says them. What aml-launch reads to find the job's topology, in",
        "order of precedence (the first source present wins; flags override any field), and the",
        "other variables it reads:", "", "```", sources, "```", "", "```", launch, "```", "",
        "What every worker gets:", "", "```", worker, "```", "",
        "Each flag's own variable (`PET_MAX_RESTARTS`, `AML_LAUNCH_HANG_TIMEOUT`, ...) is in",
        "[flags.md](flags.md).", "", END, ""])


def exit_status_page(help_text):
    statuses = help_section(help_text, "Exit status:", None)
    return "\n".join([
        "# Exit status", "", BEGIN, "",
        "Every node of a job exits with the same status. As `aml-launch --help` says it:", "",
        "```", statuses, "```", "", END, ""])


def with_table(page, table):
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + table + page[end:]


def main(argv):
    if not argv or argv[1:] not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    run = lambda name, *args: subprocess.run([os.path.join(argv[0], "launcher", name), *args],
                                             capture_output=True, text=True, check=True).stdout
    flags = json.loads(run("aml-launch-flags"))
    help_text = run("aml-launch", "--help")
    docs = os.path.join(ROOT, "docs")
    guide_path = os.path.join(docs, "guides", "from-torchrun.md")
    with open(guide_path) as f:
        guide = f.read()
    wanted = {
        os.path.join(docs, "reference", "flags.md"): flags_page(flags),
        guide_path: with_table(guide, torchrun_table(flags)),
        os.path.join(docs, "reference", "environment.md"): environment_page(help_text),
        os.path.join(docs, "reference", "exit-status.md"): exit_status_page(help_text),
    }
    stale = []
    for path, text in wanted.items():
        current = open(path).read() if os.path.exists(path) else ""
        if current == text:
            continue
        if "--check" in argv:
            stale.append(os.path.relpath(path, ROOT))
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path, ROOT)}")
    if stale:
        print("not as the code says (run scripts/make_reference_docs.py BUILD_DIR): " + ", ".join(stale))
        return 1
    if "--check" in argv:
        print(f"{len(wanted)} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
