"""Fail closed (docs/security.md): what a scanned tree or a pull request cannot make the gate overlook.
Files that could not be scanned completely, settings that would weaken a `--baseline` gate, a baseline grown in
the change under review, and new code under a vendored-looking directory name under `--diff-base`."""
