"""The yes/no item bank (CSV, any paper): its items are read by designs/csv_bank/items.py and its report
is the generic one (Table 1 by its declared factors, humans vs each model, how human-like each model is); it
registers no part of its own."""
