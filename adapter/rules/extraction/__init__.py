"""What a completion's final answer is, read leniently: the answer a judge shown only that answer
would read (``judge_input: final_answer``), the letters a multiple-choice completion picks, and a
reference's answer type when a row names none. None of it is proof: the rule pays only what the
grammar reads (``adapter.rules.proof``)."""
