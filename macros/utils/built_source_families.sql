{#- source_families(role) as a list, narrowed to the families this build processes
    (families_in_build): the models that union every family's new rows read only these
    families' tables. -#}
{% macro built_source_families(role) -%}
    {%- set in_build = families_in_build() -%}
    {%- set built = [] -%}
    {%- for item in source_families(role).split(',') -%}
        {%- if in_build is none or item.split(':')[0] in in_build -%}
            {%- do built.append(item) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(built) }}
{%- endmacro %}
