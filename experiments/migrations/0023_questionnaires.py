# Questionnaires before and after the items (issue 47 item 2).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('experiments', '0022_texts_answer_input'),
    ]

    operations = [
        migrations.AddField(
            model_name='participant',
            name='questions_after_done_at',
            field=models.DateTimeField(blank=True, help_text='When the participant completed the questionnaires shown after the items (UTC).', null=True, verbose_name='questionnaires after the items done'),
        ),
        migrations.AddField(
            model_name='participant',
            name='questions_before_done_at',
            field=models.DateTimeField(blank=True, help_text='When the participant completed the questionnaires shown before the items (UTC).', null=True, verbose_name='questionnaires before the items done'),
        ),
        migrations.AddField(
            model_name='participant',
            name='trials_done_at',
            field=models.DateTimeField(blank=True, help_text='When every item was answered, where questionnaires follow the items (UTC).', null=True, verbose_name='items answered'),
        ),
        migrations.CreateModel(
            name='Questionnaire',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('title', models.CharField(help_text="The page's heading, as participants see it.", max_length=200)),
                ('intro', models.TextField(blank=True, help_text='A short text above the questions (optional).')),
                ('placement', models.CharField(choices=[('before', 'before the items (after the consent)'), ('after', 'after the items (before the completion code)')], default='after', help_text='Before the items (after the consent) or after them (before the code).', max_length=6)),
                ('position', models.PositiveSmallIntegerField(default=0, help_text='Its order among the questionnaires of the same placement (lowest first).')),
                ('enabled', models.BooleanField(default=False, help_text="Off: participants do not see it (a new study's default questionnaires start off).", verbose_name='shown to participants')),
                ('arm', models.ForeignKey(help_text="The study's human arm it belongs to.", on_delete=django.db.models.deletion.CASCADE, related_name='questionnaires', to='experiments.humanarm')),
            ],
            options={
                'ordering': ('placement', 'position', 'id'),
            },
        ),
        migrations.CreateModel(
            name='Question',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveSmallIntegerField(default=0, help_text='Its order on the page (lowest first).')),
                ('key', models.SlugField(help_text='The column name in the data files (letters, digits, _ and -), unique within the study, e.g. age_band. A participant factor of the report is named by it.', max_length=40)),
                ('text', models.TextField(help_text='The question as participants read it.', verbose_name='wording')),
                ('kind', models.CharField(choices=[('choice', 'multiple choice (one answer)'), ('likert', 'Likert scale'), ('number', 'number'), ('short_text', 'short text (one line)'), ('long_text', 'long text (a paragraph)')], default='choice', help_text="What kind of answer it takes; fill in that kind's fields below.", max_length=12)),
                ('required', models.BooleanField(default=False, help_text='Participants cannot go on without answering it.')),
                ('choices', models.TextField(blank=True, help_text='Multiple choice: one choice per line (the data hold its text).')),
                ('scale_points', models.PositiveSmallIntegerField(blank=True, help_text='Likert: how many points (2–11), e.g. 5 or 7.', null=True)),
                ('scale_start', models.SmallIntegerField(default=1, help_text="Likert: the lowest point's number (1, or 0).")),
                ('scale_low_label', models.CharField(blank=True, help_text='Likert: the label of the lowest point, e.g. Strongly disagree.', max_length=80)),
                ('scale_high_label', models.CharField(blank=True, help_text='Likert: the label of the highest point, e.g. Strongly agree.', max_length=80)),
                ('number_min', models.FloatField(blank=True, help_text='Number: the smallest allowed (empty: none).', null=True, verbose_name='smallest number')),
                ('number_max', models.FloatField(blank=True, help_text='Number: the largest allowed (empty: none).', null=True, verbose_name='largest number')),
                ('whole_number', models.BooleanField(default=True, help_text='Number: whole numbers only.')),
                ('max_length', models.PositiveIntegerField(blank=True, help_text='Short and long text: the most characters an answer may have (empty: 200 short, 2000 long).', null=True, verbose_name='length cap (characters)')),
                ('questionnaire', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='questions', to='experiments.questionnaire')),
            ],
            options={
                'ordering': ('questionnaire', 'position', 'id'),
            },
        ),
        migrations.CreateModel(
            name='QuestionnaireAnswer',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('value', models.TextField(blank=True, help_text='The answer as stored (logic/questions.py answer_value).')),
                ('idempotency_key', models.CharField(blank=True, help_text="The browser's key for the last save of this answer.", max_length=64, verbose_name='resend key')),
                ('answered_at', models.DateTimeField(auto_now=True, help_text='When the answer was last saved (UTC).')),
                ('participant', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='questionnaire_answers', to='experiments.participant')),
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='answers', to='experiments.question')),
            ],
        ),
        migrations.CreateModel(
            name='QuestionnaireCompletion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('completed_at', models.DateTimeField(auto_now_add=True)),
                ('participant', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='questionnaires_done', to='experiments.participant')),
                ('questionnaire', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='completions', to='experiments.questionnaire')),
            ],
        ),
        migrations.AddConstraint(
            model_name='question',
            constraint=models.UniqueConstraint(fields=('questionnaire', 'key'), name='question_unique_key'),
        ),
        migrations.AddConstraint(
            model_name='questionnaireanswer',
            constraint=models.UniqueConstraint(fields=('participant', 'question'), name='questionnaire_answer_unique'),
        ),
        migrations.AddConstraint(
            model_name='questionnairecompletion',
            constraint=models.UniqueConstraint(fields=('participant', 'questionnaire'), name='questionnaire_completion_unique'),
        ),
    ]
