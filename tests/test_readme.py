"""The README's examples and the library's docstring examples run as written."""

import doctest
import re

import bleu_core
import bleu_core.stats
import bleu_core.tokenizers

from .oracle import REPO


def test_readme_examples():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    globs, runner, parser = {}, doctest.DocTestRunner(optionflags=doctest.ELLIPSIS), doctest.DocTestParser()
    for i, block in enumerate(blocks):  # one namespace: later blocks use earlier names
        test = parser.get_doctest(block, globs, f"README block {i}", "README.md", 0)  # copies globs
        runner.run(test, clear_globs=False)
        globs = test.globs
    result = runner.summarize(verbose=False)
    assert result.attempted >= 8 and result.failed == 0


def test_docstring_examples():
    for module in (bleu_core, bleu_core.stats, bleu_core.tokenizers):
        result = doctest.testmod(module)
        assert result.failed == 0
