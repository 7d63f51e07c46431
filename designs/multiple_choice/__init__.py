"""The multiple-choice design (seed 001): its metrics (Accuracy, Circular, PartialCircular) and its
report section."""
