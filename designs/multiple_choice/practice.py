"""The multiple-choice design's (seed 001) practice questions and catch items: four options each, the one that
follows by a form no bank is taken to test (a bank's own forms are checked when the study opens). Pure Python."""
from __future__ import annotations


def multiple_choice_practice() -> list[dict]:
    """Four-option questions (seed 001): the one conclusion that follows, by conjunction elimination
    and by disjunction introduction (a bank's own forms are checked when the study opens)."""
    return [
        {
            "premises": ["Mia is painting a fence and Leo is washing a car."],
            "question": "Which conclusion follows from the statements?",
            "options": ["Leo isn't washing a car.", "Leo is washing a car.", "Mia isn't painting a fence.",
                        "Sam is cooking dinner."],
            "answer": "B", "logical_form": "p ∧ q ⊢ q",
        },
        {
            "premises": ["Sam is cooking dinner."],
            "question": "Which conclusion follows from the statements?",
            "options": ["Sam isn't cooking dinner.", "Kim is reading a book.",
                        "Sam is cooking dinner or Kim is reading a book.", "Kim isn't reading a book."],
            "answer": "C", "logical_form": "p ⊢ p ∨ q",
        },
    ]


def multiple_choice_checks() -> list[dict]:
    """Four-option catch items whose answer is stated in the statements."""
    return [
        {
            "premises": ["Anna is reading a book. Tom is baking bread."],
            "question": "Which of these is stated above?",
            "options": ["Anna is baking bread.", "Anna is reading a book.", "Tom is reading a book.",
                        "Tom isn't baking bread."],
            "answer": "B",
        },
        {
            "premises": ["Ben is washing a car. Eva is singing a song."],
            "question": "Which of these is stated above?",
            "options": ["Ben is singing a song.", "Eva is washing a car.", "Eva is singing a song.",
                        "Ben isn't washing a car."],
            "answer": "C",
        },
    ]
