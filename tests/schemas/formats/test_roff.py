from trajforge.schemas.formats.roff import render_man

MAN = r""".\" a comment
.TH WC "1" "September 2022" "GNU coreutils 9.1" "User Commands"
.de XX
macro body that must not show
..
.SH NAME
wc \- print newline, word, and byte counts
.SH DESCRIPTION
.PP
Print newline, word, and byte counts for each FILE, and a total line if
more than one FILE is specified.
.TP
\fB\-c\fR, \fB\-\-bytes\fR
print the byte counts
.nf
  keep   this
  layout
.fi
Copyright \(co 2022
"""


def test_man_pages_render_to_their_words():
    text = render_man(MAN)
    assert text.startswith("WC(1)\n\nNAME\n\nwc - print newline")
    assert "for each FILE, and a total line if more than one FILE is specified." in text  # a filled paragraph
    assert "-c, --bytes print the byte counts" in text and "  keep   this\n  layout" in text
    assert "(c) 2022" in text and "macro body" not in text and "comment" not in text and "\\f" not in text
