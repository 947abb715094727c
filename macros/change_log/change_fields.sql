{#- The change log's columns (docs/decisions/001), named once for the models that pass its rows
    on, store or union them. The lists render comma-separated (callers split them): text renders
    alike in dbt, in sqlfluff's templater and in plain Jinja (tests/project_macros.py). -#}

{#- The change a line decodes to: the names of CHANGE_COLUMNS (python_udfs/change_log.py), the
    row every family's flatten returns, in that order, without `error`: a row with an error is
    quarantined (cdc_quarantine), never a change. committed_at is epoch microseconds where a
    UDF returns it and a timestamp from the decoding models on.
    tests/unit/test_change_log_columns.py holds the two lists equal. -#}
{% macro change_fields() -%}
    {{- [
        'source_table', 'key_json', 'op', 'row_image', 'is_backfill', 'order_ts', 'sort_pos',
        'committed_at', 'txn_id', 'event_id',
    ] | join(',') -}}
{%- endmacro %}
