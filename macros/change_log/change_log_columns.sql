{#- A change-log row, as every family's changes are unioned (int_cdc__source_changes): where
    it comes from, the change (change_fields), where it was landed. `stored`: as
    int_cdc__change_log stores it, with image_has_unknown_values and key_cohort after those. -#}
{% macro change_log_columns(stored=false) -%}
    {{- (
        ['source_system', 'source_name'] + change_fields().split(',')
        + ['file_path', 'line_number', 'landing_run']
        + (['image_has_unknown_values', 'key_cohort'] if stored else [])
    ) | join(',') -}}
{%- endmacro %}
