{#- `cdcw run`, the scheduled job, sets var cdc_test_from_landing_run to the first landing run
    its build processes: the tests of cdc_history and cdc_current then read only the rows the
    build rewrote (the keys it recomputed; a carried row is unchanged and was tested when it was
    written, docs/decisions/003). Without the var (any `cdcw dbt test`, a full refresh) they
    read everything. -#}

{% macro rows_under_test(relation) -%}
    {%- set from_run = var('cdc_test_from_landing_run', none) -%}
    {%- if from_run is none or relation.identifier not in ['cdc_history', 'cdc_current'] -%}
        {{ return(relation) }}
    {%- endif -%}
    {{ return(
        "(select * from " ~ relation ~ " where last_landing_run >= " ~ (from_run | int) ~ ")"
    ) }}
{%- endmacro %}


{#- Every generic test's model goes through this (dbt's hook for the `where` config). No alias:
    tests alias their model themselves, and Spark takes a subquery without one. -#}
{% macro spark__get_where_subquery(relation) -%}
    {%- set scoped = rows_under_test(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- if where -%}
        {{ return("(select * from " ~ scoped ~ " where " ~ where ~ ")") }}
    {%- endif -%}
    {{ return(scoped) }}
{%- endmacro %}
