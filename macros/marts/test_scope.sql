{#- `cdcw run`, the scheduled job, sets the session setting cdc.test_from_landing_run
    (cdc_warehouse/steps.py, TEST_SCOPE_SETTING) to the first landing run its build processes, or
    the var cdc_test_from_landing_run does: a setting, so that dbt's parse of the project does not
    change from run to run (vars are part of it, and a new value means parsing all again). The
    tests of the models that follow cdc_history (cdc_history,
    cdc_current and the typed views over them) then read only the rows the build rewrote (the
    keys it recomputed; another key's row is unchanged and was tested when it was written,
    docs/decisions/006), the Spanner tests read only the changes it applied, and the
    uniqueness tests of the append-only key registry and Spanner transactions only the values
    it appended. Without either (any `cdcw dbt test`, a full refresh) they read everything.
    Typed column discovery (macros/marts/typed_models.sql) reads the same rows. -#}

{#- Whether a relation's rows carry last_landing_run from cdc_history: the two marts and every
    typed model (one with meta.cdc_source). `graph` is empty while dbt parses. -#}
{% macro follows_cdc_history(relation) -%}
    {%- if relation.identifier in ['cdc_history', 'cdc_current'] -%}
        {{ return(true) }}
    {%- endif -%}
    {%- for node in graph.get('nodes', {}).values() -%}
        {%- if node.resource_type == 'model' and node.alias == relation.identifier
            and node.config.meta.get('cdc_source') -%}
            {{ return(true) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(false) }}
{%- endmacro %}


{#- The first landing run whose rows this build tests, none for every row (always none while
    dbt parses). -#}
{% macro tested_from_landing_run() -%}
    {%- set from_var = var('cdc_test_from_landing_run', none) -%}
    {%- if from_var is not none or not execute -%}
        {{ return(from_var) }}
    {%- endif -%}
    {%- set setting = run_query('set cdc.test_from_landing_run').rows[0][1] -%}
    {{ return(setting | int if setting is string and setting.isdigit() else none) }}
{%- endmacro %}


{#- A filter on a landing-run column: the rows this build wrote, or all rows. -#}
{% macro written_by_this_build(landing_run) -%}
    {%- set from_run = tested_from_landing_run() -%}
    {%- if from_run is none -%}
        {{ return('true') }}
    {%- endif -%}
    {{ return(landing_run ~ ' >= ' ~ (from_run | int)) }}
{%- endmacro %}


{% macro rows_under_test(relation) -%}
    {%- if tested_from_landing_run() is none or not follows_cdc_history(relation) -%}
        {{ return(relation) }}
    {%- endif -%}
    {{ return(
        "(select * from " ~ relation ~ " where "
        ~ written_by_this_build('last_landing_run') ~ ")"
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


{#- For a uniqueness test of an append-only model: the rows sharing their values (`columns`)
    with a row this build appended (`appended_in`, the model's landing-run column), the older
    rows included, since a new row may repeat an old one; older rows were checked when they
    were appended. So the test costs what the build added, not the whole table. Every row when
    the build tests everything, or added more rows than a broadcast holds. -#}
{% macro rows_sharing_appended_values(model, columns, appended_in) -%}
    {%- set appended = written_by_this_build(appended_in) if appended_in else 'true' -%}
    {%- if appended == 'true' -%}
        {{ return(model) }}
    {%- endif -%}
    {%- set hint = broadcast_hint('appended_values', count_rows(model, appended)) -%}
    {%- if not hint -%}
        {{ return(model) }}
    {%- endif -%}
    {%- set same_values = [] -%}
    {%- for column in columns -%}
        {%- do same_values.append(
            'model_rows.' ~ column ~ ' <=> appended_values.' ~ column
        ) -%}
    {%- endfor -%}
    {{ return(
        '(select ' ~ hint ~ ' model_rows.* from ' ~ model ~ ' as model_rows'
        ~ ' left semi join (select distinct ' ~ columns | join(', ') ~ ' from ' ~ model
        ~ ' where ' ~ appended ~ ') as appended_values on '
        ~ same_values | join(' and ') ~ ')'
    ) }}
{%- endmacro %}
