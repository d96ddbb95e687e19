"""Extract catalog/session statements from a PostgreSQL 15 stderr log slice.

usage: extract.py TOOL.log > TOOL.sql
Log format: log_line_prefix='%m [%p] %a|%d|', log_statement=all,
log_parameter_max_length=-1. Continuation lines carry one added leading tab,
which is removed.
"""
import json
import re
import sys

HEAD = re.compile(r'^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \w+ \[(\d+)\] [^|]*\|[^|]*\|([A-Z]+):  (.*)$')
CATALOG = re.compile(r'''pg_catalog|information_schema|\bpg_\w+|\bformat_type\s*\(|\bcurrent_schemas?\b|\bcurrent_database\s*\(|
    \bcurrent_catalog\b|\bcurrent_user\b|\bsession_user\b|\bcurrent_setting\s*\(|\bset_config\s*\(|\bversion\s*\(\s*\)|
    \bhas_\w+_privilege\s*\(|\b(obj|col|shobj)_description\s*\(|::\s*reg(class|type|proc|procedure|namespace|role|oper|operator|config|dictionary|collation)\b|
    \bto_reg\w+\s*\(|\binet_server_\w+\s*\(|\btxid_\w+\s*\(''', re.I | re.X)
SESSION = re.compile(r'^\s*(SET|SHOW|RESET)\b', re.I)
PREPARED_EXEC = re.compile(r'^\s*EXECUTE\s+\w+\s*\(', re.I)


def records(lines):
    rec = None
    for line in lines:
        line = line.rstrip('\n')
        m = HEAD.match(line)
        if m:
            if rec:
                yield rec
            rec = [m.group(2), m.group(3)]
        elif rec is not None:
            rec[1] += '\n' + (line[1:] if line.startswith('\t') else line)
    if rec:
        yield rec


def parse_params(s):
    out, i = [], 0
    while i < len(s):
        m = re.compile(r'\$(\d+) = ').match(s, i)
        if not m:
            raise ValueError('bad params at %r' % s[i:i + 40])
        i = m.end()
        if s.startswith('NULL', i):
            out.append(None)
            i += 4
        else:
            assert s[i] == "'", s[i:i + 40]
            i += 1
            buf = []
            while True:
                j = s.index("'", i)
                buf.append(s[i:j])
                if s.startswith("''", j):
                    buf.append("'")
                    i = j + 2
                else:
                    i = j + 1
                    break
            out.append(''.join(buf))
        if s.startswith(', ', i):
            i += 2
    return out


def main(path):
    stmts = []  # [text, params]
    for level, msg in records(open(path, encoding='utf-8')):
        if level == 'LOG':
            m = re.match(r'(?s)(?:statement|execute [^:]+): (.*)$', msg)
            if m:
                stmts.append([m.group(1), None])
        elif level == 'DETAIL' and msg.startswith('parameters: ') and stmts:
            stmts[-1][1] = parse_params(msg[len('parameters: '):])
    seen, out = set(), []
    for text, params in stmts:
        if re.match(r'(?i)\s*SET\s+certa\.', text):  # the scenarios' own setting, not a tool query
            continue
        if not (CATALOG.search(text) or SESSION.match(text) or PREPARED_EXEC.match(text)):
            continue
        key = (text, json.dumps(params))
        if key in seen:
            continue
        seen.add(key)
        block = ''
        if params is not None:
            block += '-- params: ' + json.dumps(params, ensure_ascii=False, separators=(',', ':')) + '\n'
        out.append(block + text)
    sys.stdout.write('\n-- next\n'.join(out) + '\n')
    print(len(out), file=sys.stderr)


main(sys.argv[1])
