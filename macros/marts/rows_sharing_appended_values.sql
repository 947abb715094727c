{#- For a uniqueness test of an append-only model: the rows sharing their values (`columns`)
    with a row this build appended (`appended_in`, the model's landing-run column), the older
    rows included, since a new row may repeat an old one; older rows were checked when they
    were appended. So the test costs what the build added, not the whole table. Every row when
    the build tests everything, or added more rows than a broadcast holds. -#}
{% macro rows_sharing_appended_values(model, columns, appended_in) -%}
    {%- set appended = written_by_this_build(appended_in) if appended_in else 'true' -%}
    {%- if appended == 'true' -%}
        {{ return(model) }}
    {%- endif -%}
    {%- set hint = broadcast_hint('appended_values', count_rows(model, appended)) -%}
    {%- if not hint -%}
        {{ return(model) }}
    {%- endif -%}
    {%- set same_values = [] -%}
    {%- for column in columns -%}
        {%- do same_values.append(
            'model_rows.' ~ column ~ ' <=> appended_values.' ~ column
        ) -%}
    {%- endfor -%}
    {{ return(
        '(select ' ~ hint ~ ' model_rows.* from ' ~ model ~ ' as model_rows'
        ~ ' left semi join (select distinct ' ~ columns | join(', ') ~ ' from ' ~ model
        ~ ' where ' ~ appended ~ ') as appended_values on '
        ~ same_values | join(' and ') ~ ')'
    ) }}
{%- endmacro %}
