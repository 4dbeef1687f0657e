"""A command's settings turned into a run: the invocation, the gate, the pipeline, the workers, one file's scan and
the files a run reads."""
