"""`rocm-audit fleet`: the ordinary single-repository audit run over many repositories (a process pool here, or
a Dask cluster), each a task with its own timeout, and the portfolio built from their JSON reports."""
