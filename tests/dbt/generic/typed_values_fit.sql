{#- A typed model reads each column from row_json with its declared type: a value that is
    there but does not fit that type (the source changed the column's type, or the declared
    type is wrong) would read as NULL. This test names such rows and columns. -#}
{% test typed_values_fit(model) %}

{%- set system_columns = (
    typed_system_columns('current').split(',') + typed_system_columns('history').split(',')
) %}
    {%- set typed_columns = [] %}
    {#- The model may be a subquery (the rows under test), so its columns come from a query. -#}
    {%- if execute %}
    {%- for column_name in run_query('select * from ' ~ model ~ ' limit 0').column_names %}
        {%- if column_name not in system_columns %}
            {%- do typed_columns.append(column_name) %}
        {%- endif %}
    {%- endfor %}
{%- endif %}

with typed_rows as (
    select
        *,
        from_json(row_json, 'map<string,string>') as row_values
    from {{ model }}
),

final as (
    select
        typed_rows.key_json,
        misfits.column_name
    from typed_rows
    lateral view explode(
        array(
            cast(null as string)
{%- for column in typed_columns %},
                if(
                    typed_rows.row_values['{{ column }}'] is not null
                    and typed_rows.`{{ column }}` is null,
                    '{{ column }}',
                    null
                )
            {%- endfor %}
        )
    ) misfits as column_name
    where misfits.column_name is not null
)

select * from final

{% endtest %}
