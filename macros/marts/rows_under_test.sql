{% macro rows_under_test(relation) -%}
    {%- if tested_from_landing_run() is none or not follows_cdc_history(relation) -%}
        {{ return(relation) }}
    {%- endif -%}
    {{ return(
        "(select * from " ~ relation ~ " where "
        ~ written_by_this_build('last_landing_run') ~ ")"
    ) }}
{%- endmacro %}
