"""The ROCm reach model (docs/reach-model.md): for each line, whether a ROCm user's default install ships it,
builds it, imports it, calls it and takes its branch, each answer with its evidence, computed once per run from
what the build readers (auditor/model/rocmpath/) and the scan found, and frozen."""
