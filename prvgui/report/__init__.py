"""Reports: one document holding everything prvgui says about a composition (the composition,
the certified headline, the accountants compared, the four plots, the attack-risk and utility
read-outs, the error budget, the method with its sources), as HTML (``html.py``, no Qt) or PDF
(``pdf.py``, Qt's own PDF writer); and the results table as Markdown or LaTeX (``tables.py``).

``model.gather`` collects the report's content as plain data; the writers lay it out.
"""
