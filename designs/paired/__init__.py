"""The paired designs (RULEBREAKERS, seed 000; dual-sided rules, seed 004) and perturbed copies (seed
002): the frames the paired sections read, their statistics sections and how people were shown the pairs."""
