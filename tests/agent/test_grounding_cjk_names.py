"""Names in Chinese, Japanese and Korean: told by what marks them (a company's ending, a person's title,
honorific or role), never taken from a common word that stands before such a mark."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.grounding.cjk_names import begins_name, cjk_names, judged_by
from tests.examples import checks

CHECKS = checks(200)


def names(text: str) -> list[str]:
    return [found.name for found in cjk_names(text)]


def test_cjk_names_companies_are_told_by_their_ending_in_each_script():
    assert names("东海联合保险一季度车险碰撞类赔案共3,600件。") == ["东海联合保险"]
    assert cjk_names("江南保险公司")[0].readings == ("江南",)  # its own part, the endings aside
    assert cjk_names("中国人寿保险")[0].readings == ("中国",)  # and the kind of company it is
    assert names("東海フロンティア銀行の3月の新規口座開設数") == ["東海フロンティア銀行"]
    assert names("株式会社ミライの売上") == ["株式会社ミライ"]
    assert names("이번 달 최대 거래처는 한빛물산으로 주문액이") == ["한빛물산"]
    assert names("바다손해보험의 1분기") == ["바다손해보험"]
    assert names("研发部通过招商银行支付了300万元") == ["招商银行"]  # a name begins after a verb


def test_cjk_names_people_are_told_by_a_title_an_honorific_or_a_role():
    assert names("上周王思远一个人就处理了842张工单") == ["王思远"]
    assert names("客服王思远处理了") == ["王思远"]
    assert names("销售冠军是陈经理，个人销售额386万元") == ["陈经理"]
    assert cjk_names("上周王经理处理了30单")[0].readings == ("周王", "王")  # "上周" or "周王": either reading
    assert names("佐藤さん、鈴木さん、中村さんの3人です") == ["佐藤", "鈴木", "中村"]
    assert names("今月は山本さんが一人で") == ["山本"]
    assert names("김도윤 님은 오전 8시에") == ["김도윤"]
    assert names("박지훈 팀장이 승인했습니다") == ["박지훈"]


def test_cjk_names_common_words_before_a_mark_name_no_one():
    common = [
        *("该保险公司一季度", "其子公司共有5家", "多数客户购买保险", "城市商业银行", "两家科技公司", "一家公司"),
        *("人寿保险保费收入", "高科技企业占比30%", "基金经理共3人", "高级工程师3人", "产品经理岗位收到120份简历"),
        *("本周经理例会上公布", "对方经理确认了", "平均一个人处理85张"),
        *("本月客服团队共处理1200张工单", "员工总数为350人", "每个人处理了30单", "客服同事的响应速度"),
        *("お客様満足度は85%", "サーバーの仕様は", "患者さんは30人です", "損害保険会社3社", "生命保険料は月5000円"),
        *("고객님의 주문은 3건입니다", "자동차보험료가", "신용카드 결제", "전체 팀장 5명", "중앙은행 기준금리는"),
        *("월 통신비는 5만 원", "서울날씨 12도", "今年加大科技投入", "在提升科技水平方面", "大手銀行や生命保険会社"),
        *("ネット銀行経由の入金", "前回同様に好調です", "スタッフさん、お疲れ様でした", "인터넷은행 입금이 많았습니다"),
        *("대형 은행이나 보험사와 비교하면", "팀장님께 보고드렸어요", "김 팀장이 확인했습니다"),
    ]
    assert {text: names(text) for text in common} == {text: [] for text in common}


def test_cjk_names_a_tail_is_known_only_where_a_name_begins():
    assert begins_name('{"insurer": "江南财险"}', "江南")
    assert begins_name("营业部的江南财险", "江南")  # after a word no name holds
    assert not begins_name('{"bank": "北陸フロンティア銀行"}', "フロンティア")  # the tail of another name
    assert not begins_name("江南联合保险", "联合")


def test_cjk_names_korean_and_japanese_ones_are_judged_only_by_a_text_in_their_script():
    korean, japanese, chinese = cjk_names("김도윤 님"), cjk_names("佐藤さん"), cjk_names("王思远先生")
    assert judged_by(korean[0], '{"owner": "박지훈"}') and not judged_by(korean[0], '{"owner": "Kim Doyun"}')
    assert judged_by(japanese[0], '{"owner": "山本"}') and not judged_by(japanese[0], '{"owner": "Sato"}')
    assert judged_by(chinese[0], '{"owner": "Wang Siyuan"}')  # pinyin


@CHECKS
@given(st.text(alphabet="王思远周东海联合保险公司一个人的经理さん様の佐藤김도윤님은 ，。、0123", max_size=24))
def test_cjk_names_each_stands_where_it_is_found_and_is_told_by_what_the_text_writes(text):
    for found in cjk_names(text):
        assert 0 <= found.start < found.end <= len(text)
        assert text[found.start : found.end] == found.name
        assert all(reading and reading in text for reading in found.readings)
        assert all(tail in found.readings[0] and tail != found.readings[0] for tail in found.tails)
