"""lm-eval task folder (YAMLs + thin glue); a package only so wheels ship its data files."""
