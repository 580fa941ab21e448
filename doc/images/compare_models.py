"""The user guide's picture of a comparison (doc/images/compare_models.png): the SMS pipelines
of ``skanchors demo --compare``. Run from the repository root: python doc/images/compare_models.py
"""

import matplotlib

from skanchors import compare_models
from skanchors._compare_demo import TOKEN, leaky_sms

matplotlib.use("Agg")
splits, models = leaky_sms(0)
X_val, y_val = splits["val"]
result = compare_models(models, X_val, y=y_val, n_rows=100, k=6, random_state=0)
figure = result.plot()[0, 0].figure
figure.set_size_inches(7.0, 4.2)
figure.savefig("doc/images/compare_models.png", dpi=72)
print(result.reliance([TOKEN], by_class=True))
