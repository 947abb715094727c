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


{#- A change-log row, as every family's changes are unioned (int_cdc__source_changes): where
    it comes from, the change (change_fields), where it was landed. `stored`: as
    int_cdc__change_log stores it, with image_has_unknown_values and key_cohort after those. -#}
{% macro change_log_columns(stored=false) -%}
    {{- (
        ['source_system', 'source_name'] + change_fields().split(',')
        + ['file_path', 'line_number', 'landing_run']
        + (['image_has_unknown_values', 'key_cohort'] if stored else [])
    ) | join(',') -}}
{%- endmacro %}


{#- The select list of a change-log row in change_log_columns' order: `relation.column`, or
    `expression as column` where `expressions` gives the column's value; one column a line,
    the lines after the first indented by `indent` spaces. Every branch of a union of
    change-log rows selects through this, so the branches line up by name. -#}
{% macro change_log_select(relation, expressions={}, stored=false, indent=8) -%}
    {%- set columns = change_log_columns(stored).split(',') -%}
    {%- for name in expressions if name not in columns -%}
        {{ exceptions.raise_compiler_error(
            'change_log_select: ' ~ name ~ ' is not a change-log column'
        ) }}
    {%- endfor -%}
    {%- for name in columns -%}
        {{ expressions[name] ~ ' as ' ~ name if name in expressions else relation ~ '.' ~ name }}
        {{- ',\n' ~ ' ' * indent if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
