{#- Typed per-table models: a view over cdc_current or cdc_history for one source table, with a
    real column per source column. The model's yml is the configuration: `meta.cdc_source`
    names the table, a documented column's `data_type` gives its type; every other column takes
    the type its source names (int_cdc__column_types), string when it names none (`cdcw
    generate-typed-models` writes such models with those types spelled out). Columns the source
    adds later appear at the next run, without a full refresh: under `cdcw run`
    the view keeps the columns it has and looks for new ones only in the rows the build wrote
    (macros/marts/tested_from_landing_run.sql); elsewhere, or when the view is new, in every row. A value that does
    not fit its declared type reads as NULL here (row_json keeps it) and fails the
    typed_values_fit test. -#}

{% macro typed_table(state_relation, state) -%}
    {#- The typed views read the source's column types as they compile: built before them. -#}
    -- depends_on: {{ ref('int_cdc__column_types') }}
    {%- set system_columns = typed_system_columns(state).split(',') -%}
    {%- set source = model.config.meta.get('cdc_source') if model is defined else none -%}
    {%- if source is none -%}
        {%- if execute and model is defined -%}
        {{ exceptions.raise_compiler_error(
            "typed model " ~ model.name ~ " needs config.meta.cdc_source in its yml"
        ) }}
        {%- endif -%}
        {#- While dbt parses, the yml's meta is not applied yet. -#}
        {%- set source = {'source_system': '', 'source_table': '', 'source_name': none} -%}
    {%- endif -%}
    {#- Declared source columns (those with a data_type), then any column seen in the data that is
    not declared, as a string. -#}
    {%- set columns = [] -%}
    {%- for column in (model.columns.values() if model is defined else []) -%}
        {%- if column.name not in system_columns and column.data_type -%}
            {%- do columns.append({'name': column.name, 'data_type': column.data_type}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set declared_names = columns | map(attribute='name') | list -%}
    {%- if execute and source.source_system -%}
        {%- set known_names = [] -%}
        {%- set rows_to_scan = 'true' -%}
        {%- set existing_view = load_relation(this) -%}
        {%- if existing_view is not none and tested_from_landing_run() is not none -%}
            {%- for column in adapter.get_columns_in_relation(existing_view) -%}
                {%- do known_names.append(column.name) -%}
            {%- endfor -%}
            {%- set rows_to_scan = written_by_this_build('last_landing_run') -%}
        {%- endif -%}
        {#- json_object_keys reads only the top-level names, without building each row's map. -#}
        {%- set seen = run_query(
            "select distinct column_name from " ~ state_relation
            ~ " lateral view explode(json_object_keys(row_json)) seen_columns as column_name"
            ~ " where " ~ typed_source_filter(source) ~ " and " ~ table_cohorts(source)
            ~ " and " ~ rows_to_scan
        ) -%}
        {%- set source_types = source_spark_types(source) -%}
        {%- set names = known_names + seen.columns[0].values() | list
            + source_types.keys() | list -%}
        {%- for name in names | unique | sort -%}
            {%- if name not in declared_names and name not in system_columns -%}
                {%- set data_type = source_types.get(name, 'string') -%}
                {%- do columns.append({'name': name, 'data_type': data_type}) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif %}

with source_rows as (
    select
        *,
        from_json(row_json, 'map<string,string>') as row_values
    from {{ state_relation }}
    where
        {{ typed_source_filter(source) }}
        and {{ table_cohorts(source) }}
),

final as (
    select
    {%- for column in columns %}
        {{ typed_value(column.name, column.data_type) }} as `{{ column.name }}`,
    {%- endfor %}
    {{ system_columns | join(', ') }}
    from source_rows
)

select * from final
{%- endmacro %}
