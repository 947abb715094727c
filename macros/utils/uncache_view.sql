{#- Drops a view `cached_view` cached, when the model that read it is done (its post-hook). -#}
{% macro uncache_view(name) -%}
    {%- if execute -%}
        {%- do run_query("uncache table if exists " ~ name) -%}
        {%- do run_query("drop view if exists " ~ name) -%}
    {%- endif -%}
{%- endmacro %}
