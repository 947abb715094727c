{#- A landing run `cdcw run` passes to the build as a session setting (cdc_warehouse/steps.py):
    settings, not vars, so that dbt's parse of the project does not change from run to run. None
    when the setting is unset (any dbt command outside `cdcw run`) and while dbt parses. -#}
{% macro landing_run_setting(name) -%}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set setting = run_query('set ' ~ name).rows[0][1] -%}
    {{ return(setting | int if setting is string and setting.isdigit() else none) }}
{%- endmacro %}
