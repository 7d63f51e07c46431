"""003's modal designs (syllogisms, necessitation, distribution): their model sections (Eq. 4-6,
Appendix C, humans and models in one model), their frames and Figure 4."""
