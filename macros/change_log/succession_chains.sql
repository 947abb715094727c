{#- Every chain of primary key changes up to `depth` changes long, as SQL over `links` (the single
    changes): a chain's next change is one of its earlier key's own, at an earlier position; the
    row names the chain's newest key and its earliest one, with the position that ended the
    latter, and the newest landing run along it. `link_count`, the rows of `links`, decides
    whether the joined links are broadcast. -#}
{% macro succession_chains(links, depth, link_count) -%}
    {%- for length in range(1, depth + 1) %}
        {%- if not loop.first %}
    union all
        {%- endif %}
        {%- set landing_runs = [] %}
        {%- set joined_links = [] %}
        {%- for step in range(1, length + 1) %}
            {%- do landing_runs.append('link_' ~ step ~ '.landing_run') %}
            {%- do joined_links.append('link_' ~ step) if step > 1 %}
        {%- endfor %}
    select {{ broadcast_hint(joined_links | join(', '), link_count) if joined_links }}
        link_1.source_system,
        link_1.source_name,
        link_1.source_table,
        link_1.key_json,
        link_1.key_cohort,
        link_{{ length }}.predecessor_key_json,
        link_{{ length }}.predecessor_key_cohort,
        link_{{ length }}.sort_pos,
        {%- if length == 1 %}
        link_1.landing_run,
        {%- else %}
        greatest({{ landing_runs | join(', ') }}) as landing_run,
        {%- endif %}
        {{ length }} as chain_depth
    from {{ links }} as link_1
        {%- for step in range(2, length + 1) %}
    inner join {{ links }} as link_{{ step }}
        on
            link_{{ step }}.source_system = link_1.source_system
            and link_{{ step }}.source_name = link_1.source_name
            and link_{{ step }}.source_table = link_1.source_table
            and link_{{ step }}.key_json = link_{{ step - 1 }}.predecessor_key_json
            and link_{{ step }}.sort_pos < link_{{ step - 1 }}.sort_pos
        {%- endfor %}
    {%- endfor %}
{%- endmacro %}
