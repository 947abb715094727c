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
