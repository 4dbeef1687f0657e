"""The child process of the libclang device check (auditor/fix/hipdevice.py): reads {path, text, args, files} as JSON
on stdin, parses the text as `path` with those arguments, prints [[file, message], ...] for each error. It runs
apart from the command so that a time limit can stop it; nothing here reads options from the scanned tree."""
from __future__ import annotations

import json
import sys


def main() -> int:
    import clang.cindex as cindex

    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    unit = cindex.Index.create().parse(request["path"], args=request["args"],
                                       unsaved_files=[(request["path"], request["text"]),
                                                      *request.get("files", {}).items()])
    errors = [[str(d.location.file) if d.location.file else "", d.spelling] for d in unit.diagnostics
              if d.severity >= cindex.Diagnostic.Error]
    sys.stdout.write(json.dumps(errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
