#!/usr/bin/env python3
"""The docs can be followed: every command block of a guide or reference page runs here, or says
why it needs a real cluster; every link resolves; the front page stays short and leads to every
guide.

Each ```sh (or bash, console) block, and each block that stands for a file, has a marker on
the line before it:
  <!-- doc-test: run -->          run as a bash script in a fresh folder that has a train.py,
                                  with aml-launch and `import aml_launch` as pip would install
                                  them; its last command must exit 0
  <!-- doc-test: env NAME -->     its aml-launch lines run under the environment NAME of
                                  tests/docs/doc_envs.json (a scheduler's, as the suite fakes
                                  it elsewhere), each must exit 0; the block shows every
                                  variable of NAME (VAR=value), so that a reader can type it
  <!-- doc-test: output -->       (a text block) what the env block before it printed: each
                                  of its lines, in order, is a line of the real output ("..."
                                  stands for lines left out)
  <!-- doc-test: file PATH -->    the block is the repository's file PATH, as it is (those
                                  files are tested themselves: tests/examples)
  <!-- doc-test: cluster: WHY --> not run here: it needs a real cluster, and says why
  <!-- doc-test: get-it -->       README.md's is run from a fresh tree in a new venv by
                                  tests/docs/get_it_test.sh (its build takes minutes); a guide's
                                  has only commands of README.md's

usage: docs_test.py AML_LAUNCH BUILD_DIR      Ends with 'N passed, N failed'.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import checks  # noqa: E402
from checks import check  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MARKER = re.compile(r"^<!-- doc-test: (run|env [\w-]+|file \S+|output|get-it|cluster: .+) -->$")
FENCE = re.compile(r"^```(\w*)\s*$")
COMMAND_LANGUAGES = {"sh", "bash", "console", "shell"}
FILE_LANGUAGES = {"yaml", "yml", "dockerfile"}
README_LIMIT = 12 * 1024

cluster_only = []


def markdown_files():
    files = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CHANGELOG.md")]
    for folder, _, names in os.walk(os.path.join(ROOT, "docs")):
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".md")]
    return files


def blocks(path):
    """(line number, language, marker or None, text) of every fenced block."""
    lines = open(path).read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        language, start = m.group(1).lower(), i
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        marker = None
        if start > 0:
            mm = MARKER.match(lines[start - 1].strip())
            marker = mm.group(1) if mm else None
        out.append((start + 1, language, marker, "\n".join(lines[start + 1:j])))
        i = j + 1
    return out


def slug(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    return {slug(line.lstrip("#")) for line in open(path).read().split("\n") if line.startswith("#")}


def readme_get_it():
    """README.md's get-it block (tests/docs/get_it_test.sh runs it)."""
    found = [text for _, _, marker, text in blocks(os.path.join(ROOT, "README.md")) if marker == "get-it"]
    return found[0] if found else ""


def check_links(path):
    text = open(path).read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not os.path.exists(resolved):
            bad.append(target)
        elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            bad.append(target)
    check(f"{os.path.relpath(path, ROOT)}: every link resolves", not bad, ", ".join(bad))


def pip_python_dir():
    """The folder of the python3 pip installs for (the default one on PATH, where the JAX
    guide's JAX is), as its real path: a version manager's shim needs the caller's HOME."""
    found = shutil.which("python3")
    if not found:
        return None
    done = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True,
                          text=True)
    return os.path.dirname(done.stdout.strip()) if done.returncode == 0 else None


def setup_tools(binary, build, work):
    """aml-launch on PATH and aml_launch importable, as `pip install aml-launch` gives them; TMPDIR
    the work folder (a hang's stacks, the JAX plugin: the launcher writes them under TMPDIR)."""
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir)
    os.symlink(binary, os.path.join(bin_dir, "aml-launch"))
    # python3 is pip's, as a user's shell has it.
    python_dir = pip_python_dir()
    if python_dir and python_dir not in ("/usr/bin", "/bin", "/usr/local/bin"):
        bin_dir += ":" + python_dir
    package = os.path.join(work, "site", "aml_launch")
    shutil.copytree(os.path.join(ROOT, "python", "aml_launch"), package)
    shutil.copy(os.path.join(build, "src", "libaml_rank.so"), os.path.join(package, "libaml_rank.so"))
    return {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": os.path.join(work, "site"),
            "HOME": work, "TMPDIR": work, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_plm_rsh_agent": "false", "LANG": "C.UTF-8"}


def command_lines(text):
    """The block's commands, continuation lines joined."""
    return re.sub(r"\\\n\s*", " ", text).split("\n")


# Plumbing of the suite's own (a copy of /sys), not a scheduler's: a block need not show it.
UNSHOWN = {"AML_LAUNCH_MACHINE_ROOT"}


def shows_variable(text, name, value):
    quoted = "|".join(re.escape(v) for v in (value, f"'{value}'", f'"{value}"'))
    return re.search(rf"(?:^|\s){re.escape(name)}=(?:{quoted})(?=\s|$|\\)", text, re.M)


def check_output(name, shown, printed):
    """Every line shown (but "..."), in order, is a line of what was printed."""
    lines = [line.rstrip() for line in printed.split("\n")]
    at, missing = 0, None
    for want in (line.rstrip() for line in shown.split("\n")):
        if want.strip() in ("", "..."):
            continue
        while at < len(lines) and lines[at] != want:
            at += 1
        if at == len(lines):
            missing = want
            break
        at += 1
    check(f"{name}: is what the block before it prints", printed and missing is None,
          f"not printed (in this order): {missing!r}; printed:\n{printed[-1500:]}")


def run_block(name, text, marker, base_env, envs, build):
    """Runs the block; what its last aml-launch line printed (env blocks), else None."""
    printed = None
    folder = tempfile.mkdtemp()
    # The training script the guides run (a block may write its own).
    with open(os.path.join(folder, "train.py"), "w") as f:
        f.write("import os\nprint('rank', os.environ.get('RANK'), 'of', os.environ.get('WORLD_SIZE'))\n")
    try:
        if marker == "run":
            done = subprocess.run(["bash", "-c", text], cwd=folder, env=base_env, capture_output=True,
                                  text=True, timeout=180)
            check(f"{name}: runs and ends well", done.returncode == 0,
                  f"exit {done.returncode}: {(done.stdout + done.stderr)[-800:]}")
        elif marker.startswith("env "):
            env_name = marker.split()[1]
            extra = {k: v.replace("{machines}", os.path.join(build, "tests", "machines"))
                     for k, v in envs[env_name].items()}
            unshown = [k for k, v in envs[env_name].items()
                       if k not in UNSHOWN and not shows_variable(text, k, v)]
            check(f"{name}: shows the variables of {env_name}", not unshown,
                  "not shown as VAR=value: " + ", ".join(unshown))
            lines = [line.strip() for line in command_lines(text) if line.strip().startswith("aml-launch")]
            if not lines:
                check(f"{name}: has an aml-launch line to run", False)
            for line in lines:
                done = subprocess.run(["bash", "-c", line], cwd=folder, env={**base_env, **extra},
                                      capture_output=True, text=True, timeout=60)
                check(f"{name}: `{line[:70]}` under {env_name}", done.returncode == 0,
                      f"exit {done.returncode}: {done.stderr[-600:]}")
                printed = done.stdout + done.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return printed


# What the code reads from the environment or gives the workers: names in these calls, and
# names held in constants (kProgressFdVariable = "AML_LAUNCH_PROGRESS_FD") for such calls.
VARIABLE_USES = re.compile(r'(?:find|has)\(env, "([A-Z][A-Z0-9_]+)"|getenv\("([A-Z][A-Z0-9_]+)"|'
                           r'\bset\("([A-Z][A-Z0-9_]+)"|\{"([A-Z][A-Z0-9_]*_[A-Z0-9_]+)", |'
                           r'constexpr[^=;]*=\s*"([A-Z][A-Z0-9_]*_[A-Z0-9_]+)"')


def check_variables():
    """Every variable the code reads or sets is in the reference (docs/reference/environment.md,
    made from --help; a flag's variable in docs/reference/flags.md, made from the flag table)."""
    reference = "".join(open(os.path.join(ROOT, "docs", "reference", page)).read()
                        for page in ("environment.md", "flags.md"))
    used = set()
    for top in ("src", "launcher"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith((".cpp", ".hpp")):
                    text = open(os.path.join(folder, name)).read()
                    used |= {next(g for g in m if g) for m in VARIABLE_USES.findall(text)}
    absent = sorted(v for v in used if not re.search(rf"\b{v}\b", reference))
    check(f"every variable the code reads or sets ({len(used)}) is in docs/reference/environment.md or flags.md",
          not absent and len(used) > 50, ", ".join(absent))


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, build = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    envs = json.load(open(os.path.join(HERE, "doc_envs.json")))
    readme = os.path.join(ROOT, "README.md")
    size = os.path.getsize(readme)
    check(f"README.md is a front page ({size} bytes, at most {README_LIMIT})", size <= README_LIMIT)
    readme_text = open(readme).read()
    guides = sorted(n for n in os.listdir(os.path.join(ROOT, "docs", "guides")) if n.endswith(".md"))
    unlinked = [g for g in guides if f"docs/guides/{g}" not in readme_text]
    check(f"README.md leads to every guide ({len(guides)})", not unlinked, ", ".join(unlinked))
    check("CHANGELOG.md is there", os.path.exists(os.path.join(ROOT, "CHANGELOG.md")))
    check_variables()
    work = tempfile.mkdtemp()
    try:
        base_env = setup_tools(binary, build, work)
        for path in markdown_files():
            if not os.path.exists(path):
                continue
            check_links(path)
            rel = os.path.relpath(path, ROOT)
            in_docs = rel.startswith("docs/")
            printed = None  # what the last env block printed, for an output block after it
            for line, language, marker, text in blocks(path):
                name = f"{rel}:{line}"
                if not in_docs:
                    continue
                if marker == "output":
                    check_output(name, text, printed)
                    printed = None
                    continue
                if language not in COMMAND_LANGUAGES | FILE_LANGUAGES:
                    continue
                if marker is None:
                    check(f"{name}: a {language} block says how it is tested", False,
                          "put <!-- doc-test: run | env NAME | file PATH | cluster: WHY --> before it")
                elif marker.startswith("file "):
                    wanted = os.path.join(ROOT, marker.split(None, 1)[1])
                    same = os.path.exists(wanted) and open(wanted).read().rstrip("\n") == text.rstrip("\n")
                    check(f"{name}: is {marker.split(None, 1)[1]} as it is", same)
                elif marker == "get-it":
                    commands = {c.split("#")[0].strip() for c in command_lines(readme_get_it())} - {""}
                    extra = [c for c in command_lines(text) if c.split("#")[0].strip() not in commands]
                    check(f"{name}: has only commands of README.md's get-it block", not extra, ", ".join(extra))
                elif marker.startswith("cluster:"):
                    cluster_only.append(f"{name} ({marker[len('cluster:'):].strip()})")
                else:
                    printed = run_block(name, text, marker, base_env, envs, build)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(cluster_only)} block(s) need a real cluster and are not run here:")
    for block in cluster_only:
        print(f"  {block}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
