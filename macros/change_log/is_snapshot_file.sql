{#- Whether a landed line comes from one of its source's initial snapshot files (CONTRACT §1
    "Initial snapshots"): the first directory under the source's is `snapshot`
    (`<family>/<source>/snapshot/**`; python_udfs/families.py, SNAPSHOT_DIRECTORY, for the
    tools that read landed files). Snapshot files are no part of the source's log: only the
    family's snapshot models read them (python_udfs/families.py, `Snapshots`). -#}
{% macro is_snapshot_file(family, file_path='file_path', source_name='source_name') -%}
    contains({{ file_path }}, concat('/{{ family }}/', {{ source_name }}, '/snapshot/'))
{%- endmacro %}
