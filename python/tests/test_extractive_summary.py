"""The offline model's extractive summary (extractive_summary.py) and the document a message carries (llm.py).

What ICU's word segmenter finds in these strings was read from Node's Intl.Segmenter; test/python/offline-summary.test.ts
compares whole summaries with the TypeScript side.
"""

from waystation.extractive_summary import _word_segments, content_words, format_summary, summarize_markdown, summary_length
from waystation.llm import carried_document, document_block, offline_reply


def test_words_are_found_as_unicode_word_boundaries_find_them():
    text = "e.g. U.S.A. don't 3.14 1,000 foo:bar c'est l'été naïve café ½ Ⅻ 10-20 a.b.c. x\u2019s"
    assert _word_segments(text) == [
        "e.g", "U.S.A", "don't", "3.14", "1,000", "foo:bar", "c'est", "l'été", "naïve", "café", "Ⅻ", "10", "20", "a.b.c", "x\u2019s",
    ]  # fmt: skip
    assert _word_segments("_ __ a_b _x x_ a__b c1_2d") == ["__", "a_b", "_x", "x_", "a__b", "c1_2d"]
    assert _word_segments("émoji 👍 #tag @me soft\u00adhyphen") == ["émoji", "tag", "me", "soft\u00adhyphen"]
    # Katakana runs join; Han and Hiragana are a word each (ICU's dictionary would join 漢字).
    assert _word_segments("ｱｲｳ カタカナ ひら 漢字API") == ["ｱｲｳ", "カタカナ", "ひ", "ら", "漢", "字", "API"]


def test_content_words_drop_stop_words_numbers_and_single_latin_letters():
    assert content_words("The 3 checkpoints of a task, x and Ⅻ, are saved") == ["checkpoints", "task", "saved"]


def test_a_summary_takes_the_title_the_best_sentences_and_the_sections():
    doc = "\n".join(
        [
            "# Checkpoints",
            "",
            "A checkpoint is the minimal trusted state of a task. Saving one after each step lets a task resume.",
            "The weather was nice.",
            "",
            "## Resume",
            "",
            "A resume reads the checkpoint and continues from the next step of the task.",
        ]
    )
    summary = summarize_markdown(doc, "doc.md")
    assert summary.title == "Checkpoints"
    assert summary.sections == ["Resume"]
    assert len(summary.sentences) == summary_length(4) == 2
    assert "The weather was nice." not in summary.sentences
    assert format_summary(summary).startswith("Checkpoints\n\n")
    assert format_summary(summarize_markdown("", "none.md")) == "none.md\n\nThe document has no prose to summarise."


def test_a_message_carrying_a_document_is_answered_with_its_summary():
    block = document_block('a "quoted" name.md', "# Title\n\nOne sentence here about checkpoints. Another about tasks.\n")
    assert block.startswith("<document name=\"a 'quoted' name.md\">\n")
    assert carried_document(f"Summarise it.\n\n{block}") == ("a 'quoted' name.md", "# Title\n\nOne sentence here about checkpoints. Another about tasks.\n")
    assert carried_document("no document here") is None
    assert carried_document("<document>\nunclosed") is None
    reply = offline_reply([{"role": "user", "content": f"Summarise it.\n\n{block}"}])
    assert reply == "Title\n\nOne sentence here about checkpoints. Another about tasks."
