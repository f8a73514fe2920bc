"""A `process_docs` hook whose shuffle draws on a generator of the module's own (gpqa's n-shot
shape): its state lives as long as the module does."""

import random

rng = random.Random(42)


def preprocess(text):
    return " " if text is None else text.strip().replace(" [title]", ". ").replace("  ", " ")


def shuffled_by_module_state(dataset):
    def shuffle(doc):
        choices = [preprocess(doc[f"Incorrect Answer {k}"]) for k in (1, 2, 3)]
        choices.append(preprocess(doc["Correct Answer"]))
        rng.shuffle(choices)
        right = choices.index(preprocess(doc["Correct Answer"]))
        shown = {f"choice{k + 1}": choice for k, choice in enumerate(choices)}
        return {**shown, "answer": f"({'ABCD'[right]})"}

    return dataset.map(shuffle)
