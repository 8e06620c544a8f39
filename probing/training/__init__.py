"""Training language models offline: the training text (``corpus``) and trainers."""
