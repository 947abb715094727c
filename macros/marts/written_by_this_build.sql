{#- A filter on a landing-run column: the rows this build wrote, or all rows. -#}
{% macro written_by_this_build(landing_run) -%}
    {%- set from_run = tested_from_landing_run() -%}
    {%- if from_run is none -%}
        {{ return('true') }}
    {%- endif -%}
    {{ return(landing_run ~ ' >= ' ~ (from_run | int)) }}
{%- endmacro %}
