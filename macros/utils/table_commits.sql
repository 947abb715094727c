{#- [operation, userMetadata] of `relation`'s 20 newest commits, newest first: a read of its
    Delta log, not of its rows. -#}
{% macro table_commits(relation) -%}
    {%- set commits = [] -%}
    {%- for commit in run_query('describe history ' ~ relation ~ ' limit 20').rows -%}
        {%- do commits.append([commit['operation'], commit['userMetadata']]) -%}
    {%- endfor -%}
    {{ return(commits) }}
{%- endmacro %}
