{#- A mart as it stood after landing run `landing_run`, for audit: the table's newest Delta
    version whose commit names that run or an earlier one (cdcw tags every commit with its
    landing run, cdc_warehouse/table_format.py). Reaches back as far as the retention window
    of `cdcw maintain`. Usage:
    select * from {{ cdc_as_of_run('cdc_current', 41) }} where source_table = 'shop.orders' -#}
{% macro cdc_as_of_run(model_name, landing_run) -%}
    {%- set relation = ref(model_name) -%}
    {%- if not execute -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set version = delta_version_after_run(relation, landing_run) -%}
    {%- if version is none -%}
        {{ exceptions.raise_compiler_error(
            model_name ~ " has no version from landing run " ~ landing_run
            ~ " or earlier (not built yet, or vacuumed away)"
        ) }}
    {%- endif -%}
    {{ return(relation ~ ' version as of ' ~ version) }}
{%- endmacro %}


{% macro delta_version_after_run(relation, landing_run) -%}
    {%- set commits = run_query('describe history ' ~ relation) -%}
    {%- set found = [] -%}
    {%- for commit in commits.rows -%}
        {#- A commit made by another tool may carry other metadata, or none. -#}
        {%- set tag = fromjson(commit['userMetadata'] or '{}', {}) -%}
        {%- set run = tag.get('landing_run') if tag is mapping else none -%}
        {%- if run is number and run <= landing_run | int -%}
            {%- do found.append(commit['version']) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found | max if found else none) }}
{%- endmacro %}
