"""``python -m medmtl.datasets``: check the data folder against its manifest, or regenerate it.

The folder is :func:`~medmtl.datasets.data_home` (``$MEDMTL_DATA`` or the bundled data).
Exit status 1 lists every difference.
"""

import argparse
import json
import sys

from medmtl.datasets.manifest import MANIFEST_NAME, data_home, read_manifest
from medmtl.datasets.sources import build_manifest, check_folder


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m medmtl.datasets", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help=f"write the folder's {MANIFEST_NAME} from the files as they are now")
    parser.add_argument("--files-only", action="store_true",
                        help="check the files' hashes and sizes but do not parse the data sets")
    args = parser.parse_args(argv)
    home = data_home()
    if args.write:
        path = home / MANIFEST_NAME
        path.write_text(json.dumps(build_manifest(home), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {path}")
        return 0
    problems = check_folder(home, shapes=not args.files_only)
    for line in problems:
        print(line)
    print(f"{home}: {'matches' if not problems else 'differs from'} {read_manifest(home)[0]}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
