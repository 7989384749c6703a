"""dtypefix.kbtools: the tools for editing the knowledge base, beside the runtime pipeline and never in it.

``lint`` (the gate every entry passes), ``canonical`` (the one formatting of an entry), ``ids`` (the ledger and the
id ranges), ``bounds`` (every version bound cites its source) and ``census`` (every message the stack prints, and
which entry knows it). Nothing on the path from a pasted failure to an answer imports this package.
"""
