"""Hooks of the custom lm-eval tasks beside this file (`!function utils.NAME`)."""


def process_mc(dataset):
    def clean(row):
        return {"question": row["question"].strip(), "choices": [c.strip() for c in row["choices"]]}

    return dataset.map(clean)


def fixed_examples():
    return [
        {"question": "Is water wet", "choices": ["a", "b"], "label": 0},
        {"question": "Is fire cold", "choices": ["a", "b"], "label": 1},
        {"question": "Will it rain", "choices": ["a", "b"], "label": 2},
    ]
