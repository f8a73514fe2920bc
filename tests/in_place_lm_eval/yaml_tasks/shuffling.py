"""A `process_docs` hook that shuffles each doc's choices with the global `random` (gpqa's
zero-shot shape)."""

import random


def preprocess(text):
    return " " if text is None else text.strip().replace(" [title]", ". ").replace("  ", " ")


def shuffled_globally(dataset):
    def shuffle(doc):
        choices = [preprocess(doc[f"Incorrect Answer {k}"]) for k in (1, 2, 3)]
        choices.append(preprocess(doc["Correct Answer"]))
        random.shuffle(choices)
        right = choices.index(preprocess(doc["Correct Answer"]))
        shown = {f"choice{k + 1}": choice for k, choice in enumerate(choices)}
        return {**shown, "answer": f"({'ABCD'[right]})"}

    return dataset.map(shuffle)
