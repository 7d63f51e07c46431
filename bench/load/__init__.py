"""The participant load bench's parts (bench/participants.py is its command): common names, the pure
figures, the stack, the clients, the CPU meter, phase 0 (burst.py) and phases 1 and 2 (study.py)."""
