#!/usr/bin/env python3
"""The docs' pages made from the flag table (launcher/flag_table.cpp, through the
aml-launch-flags program of a build): docs/reference/flags.md whole, and the table of
docs/guides/from-torchrun.md between its markers. --check compares instead of writing (the
suite's docs test), so that the pages cannot drift from the code.

usage: make_flag_docs.py BUILD_DIR [--check]
"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BEGIN = "<!-- made by scripts/make_flag_docs.py from launcher/flag_table.cpp: do not edit -->"
END = "<!-- end of the part made by scripts/make_flag_docs.py -->"


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def spelled(flag):
    value = {"value": " " + flag["shape"], "optional_value": "[=" + flag["shape"] + "]",
             "nothing": ""}[flag["takes"]]
    return cell(", ".join(f"`{name}{value if i == 0 else ''}`"
                          for i, name in enumerate(flag["names"])))


def reference(flags):
    lines = [
        "# Flags",
        "",
        BEGIN,
        "",
        "Every flag of `aml-launch`, as `aml-launch --help` prints it. torchrun's spellings (with",
        "underscores) are taken too; what each of torchrun's flags does here is in",
        "[From torchrun](../guides/from-torchrun.md).",
        "",
        "| flag | default | variable | what it does |",
        "|---|---|---|---|",
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
        what = flag["note"] or flag["help"]
        lines.append(f"| {spelled(flag)} | {meaning[flag['torchrun']]} | {cell(what)} |")
    return "\n".join(lines + ["", END])


def with_table(page, table):
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + table + page[end:]


def main(argv):
    if not argv or argv[1:] not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    program = os.path.join(argv[0], "launcher", "aml-launch-flags")
    flags = json.loads(subprocess.run([program], capture_output=True, text=True,
                                      check=True).stdout)
    reference_path = os.path.join(ROOT, "docs", "reference", "flags.md")
    guide_path = os.path.join(ROOT, "docs", "guides", "from-torchrun.md")
    with open(guide_path) as f:
        guide = f.read()
    wanted = {reference_path: reference(flags), guide_path: with_table(guide, torchrun_table(flags))}
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
        print("not as the flag table says (run scripts/make_flag_docs.py BUILD_DIR): " +
              ", ".join(stale))
        return 1
    if "--check" in argv:
        print(f"{len(wanted)} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
