"""LIME on a table: which columns move a logistic regression's P(income > 50K) on Adult?

The model is a whole Pipeline on the raw table (numeric columns standardised, categories
one-hot encoded), and LIME gets it as it is. For each person, 5000 perturbations are drawn
with every column taken from a reference row of its own (LIME's independent sampling), weighted
by how many of the person's bins and categories they keep, and a sparse weighted linear model
over "the column is in the person's bin" is fitted (Ribeiro, Singh and Guestrin, KDD 2016).
``sampling="joint"`` draws whole reference rows instead: weights on the data as they are,
where correlated columns share credit, but no input the data could not hold.

Run with ``python examples/lime_tabular.py`` (a few seconds).
"""

from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skanchors import LimeExplainer
from skanchors.datasets import load_adult

X, y = load_adult(return_X_y=True)  # raw columns: numbers and pandas categories
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
encode = make_column_transformer(
    (StandardScaler(), make_column_selector(dtype_include="number")),
    (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_include="category")),
)
model = make_pipeline(encode, LogisticRegression(max_iter=1000)).fit(X_train, y_train)
print(f"test accuracy: {model.score(X_test, y_test):.3f}")

# Explain P(> 50K) for everyone, so that the signs mean the same thing throughout.
explainer = LimeExplainer(model, n_features=5, target_class=1, random_state=0).fit(X_train)
rich = X_test[model.predict(X_test) == 1].iloc[:1]
for explanation in explainer.explain(X_test.iloc[:1]) + explainer.explain(rich):
    print(f"\n{explanation}")

# The same person with whole reference rows: the columns keep the data's correlations.
joint = explainer.set_params(sampling="joint").explain(rich)[0]
print(f"\nsampling='joint':\n{joint}")
