"""`rocm-audit fix`: the mechanical ROCm fixes of some findings, applied as edits and verified by a re-scan."""
