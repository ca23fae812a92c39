"""The accounting's ground floor: the value types every layer shares (``values``), input
checking with messages in the form's words (``validate``), the errors (``errors``) and the
cost a query is priced at (``cost``). Imports nothing of prvgui."""
