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
