"""Minimal pairs: a model "knows" a contrast when it scores the grammatical sentence of a pair
above the ungrammatical one. BERT-family masked LMs score by pseudo-log-likelihood (Salazar
et al. 2020; Kauf & Ivanova 2023's ``within_word_l2r``), ELMo by its two LMs' log-likelihoods.
"""
