"""`python -m aml_launch ...` runs the aml-launch executable that the wheel put on PATH."""
import os
import shutil
import sys
from importlib import metadata


def _executable():
    # The file the wheel installed (its scripts folder, wherever this environment keeps it).
    try:
        for entry in metadata.distribution("aml-launch").files or []:
            if entry.name == "aml-launch":
                path = str(entry.locate())
                if os.access(path, os.X_OK):
                    return path
    except metadata.PackageNotFoundError:
        pass
    return shutil.which("aml-launch")


def main():
    path = _executable()
    if path is None:
        sys.exit("aml_launch: the aml-launch executable is not installed with this package")
    os.execv(path, ["aml-launch", *sys.argv[1:]])


if __name__ == "__main__":
    main()
