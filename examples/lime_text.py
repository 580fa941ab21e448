"""LIME on text: which words make a TF-IDF + logistic regression model call an SMS spam?

For each message, 5000 perturbations (words replaced by "UNK", the text default) are
predicted by the model, weighted by their closeness to the message, and a sparse weighted
linear model over "word kept / replaced" is fitted (Ribeiro, Singh and Guestrin, KDD 2016).

Run with ``python examples/lime_text.py`` (a few seconds).
"""

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skanchors.datasets import load_sms_spam
from skanchors.lime import LimeExplainer

texts, labels = load_sms_spam(return_X_y=True)
train, test, y_train, y_test = train_test_split(
    texts, labels, test_size=0.25, random_state=0, stratify=labels
)
model = make_pipeline(TfidfVectorizer(), LogisticRegression(C=10, max_iter=1000))
model.fit(train, y_train)
print(f"test accuracy: {model.score(test, y_test):.3f}")

# Explain P(spam) for every message, so that the signs mean the same thing throughout.
explainer = LimeExplainer(model, n_features=6, target_class="spam", random_state=0).fit(train)
spam = next(t for t, y in zip(test, y_test) if y == "spam")
ham = next(t for t, y in zip(test, y_test) if y == "ham" and len(t.split()) > 8)
for message, explanation in zip([spam, ham], explainer.explain([spam, ham])):
    print(f"\n{message!r}")
    print(explanation)
    print("as_list:", [(word, round(weight, 3)) for word, weight in explanation.as_list()])
