"""The multi-turn side runner: games whose next prompt depends on the model's reply, on any lm-eval backend."""
