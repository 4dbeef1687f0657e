"""A command's settings turned into a run: the rulebook and options it uses, where its reports go."""
